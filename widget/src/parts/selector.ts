// Selector building as a lazy part (Svc.selectorFor, pinpoint and quotes): SelectorInfo and its
// resolution back to an element.

import { resolve, selectorInfo } from '../selector';

/** What the part defines: `selectorInfo(el, options)` and its way back, `resolve(info)`. */
export interface SelectorPart {
  selectorInfo: typeof selectorInfo;
  resolve: typeof resolve;
}

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('selector', { selectorInfo, resolve } satisfies SelectorPart);
