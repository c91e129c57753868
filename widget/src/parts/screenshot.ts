// Screenshots (lazy part): the viewport through the capture adapter, then the annotation step.

import { captureViewport } from '../capture/adapter';
import { annotate } from '../capture/annotate';

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('screenshot', { capture: captureViewport, annotate });
