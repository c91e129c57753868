// playwright-core for the bench's browser scenarios, or a {"skipped": reason} line and a clean exit
// (the runner reports the scenario as skipped).
export async function chromiumOrSkip() {
  try {
    return (await import('playwright-core')).chromium;
  } catch (error) {
    console.log(JSON.stringify({ skipped: `playwright-core is not installed (${error.code || error.message})` }));
    process.exit(0);
  }
}
