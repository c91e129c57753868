// Selector building as a lazy part (Svc.selectorFor, pinpoint and quotes): SelectorInfo and its
// resolution back to an element.

import { resolve, selectorInfo } from '../selector';

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('selector', { selectorInfo, resolve });
