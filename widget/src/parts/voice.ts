// Voice notes (lazy part): MediaRecorder on the microphone, WebM/Opus where the browser has it,
// else MP4 (Safari), stopped by the caller or at the length limit.

export interface Recording {
  startedAt: number;
  mime: string;
  /** stops and answers the note */
  stop(): Promise<{ blob: Blob; durationMs: number; mime: string }>;
  /** stops and throws the note away */
  cancel(): void;
}

export const MIME_CHOICES = ['audio/webm;codecs=opus', 'audio/webm', 'audio/mp4;codecs=mp4a.40.2', 'audio/mp4'];

export async function start(maxMs: number, onLimit: () => void): Promise<Recording> {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const mime = MIME_CHOICES.find((m) => MediaRecorder.isTypeSupported(m));
  const recorder = new MediaRecorder(stream, mime ? { mimeType: mime } : undefined);
  const chunks: Blob[] = [];
  recorder.ondataavailable = (e) => e.data && e.data.size && chunks.push(e.data);
  const startedAt = Date.now();
  const limit = window.setTimeout(onLimit, maxMs);
  const finished = new Promise<void>((resolve) => (recorder.onstop = () => resolve()));
  const end = () => {
    clearTimeout(limit);
    if (recorder.state !== 'inactive') recorder.stop();
    stream.getTracks().forEach((track) => track.stop());
  };
  recorder.start(1000);
  const type = recorder.mimeType || mime || 'audio/webm';
  return {
    startedAt,
    mime: type,
    async stop() {
      const durationMs = Math.min(maxMs, Date.now() - startedAt);
      end();
      await finished;
      return { blob: new Blob(chunks, { type: type.split(';')[0] }), durationMs, mime: type };
    },
    cancel: end,
  };
}

const define = (window as unknown as { __svcDefine?: (name: string, value: unknown) => void }).__svcDefine;
if (define) define('voice', { start });
