// The ten launcher mascots (lazy part): loaded with the panel, and by the launcher when the loader
// does not carry the mascot it needs (the shared bundle, or an init option naming another one).

import axolotl from '../mascots/axolotl.svg';
import blob from '../mascots/blob.svg';
import cat from '../mascots/cat.svg';
import chameleon from '../mascots/chameleon.svg';
import fox from '../mascots/fox.svg';
import gecko from '../mascots/gecko.svg';
import otter from '../mascots/otter.svg';
import owl from '../mascots/owl.svg';
import raccoon from '../mascots/raccoon.svg';
import robot from '../mascots/robot.svg';

export const MASCOT_SVGS: Record<string, string> = { gecko, owl, fox, cat, axolotl, raccoon, chameleon, otter, robot, blob };

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('mascots', MASCOT_SVGS);
