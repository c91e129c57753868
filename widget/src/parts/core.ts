// The sending engine as a lazy part (see src/core.ts).

import { makeCore } from '../core';

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('core', makeCore);
