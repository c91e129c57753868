// The launcher mascots (lazy part): loaded with the panel, and by the launcher when the loader
// does not carry the mascot it needs (the shared bundle, or an init option naming another one).

// The SVGs of every mascot in the server's list (MASCOTS in crates/svc-core/src/lib.rs), generated
// by the build.
import { MASCOT_SVGS } from '../generated/mascot-svgs';

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('mascots', MASCOT_SVGS);
