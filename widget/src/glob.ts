/** Whether `text` matches a glob where `*` is any run of characters (the whole text must match). */
export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** The project's `urlPatterns`: an empty list means every page. */
export function urlAllowed(patterns: string[] | undefined, href: string): boolean {
  return !patterns || patterns.length === 0 || patterns.some((p) => globMatch(p, href));
}
