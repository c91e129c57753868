// The report panel (lazy part): the face of the draft thread. The reporter stacks blocks (text,
// screenshots with annotations, voice notes, selected text and quotes, pinpoints, files), reviews
// and removes them, picks the channel and sends the whole thread as one report. History lists what
// this browser sent, from local storage only. The screenshot, voice and pinpoint code are lazy parts
// of their own, loaded on first use. The panel's pieces are in panel/ (shell.ts wires them).

import { panel } from './panel/shell';

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('panel', panel);
