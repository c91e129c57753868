// The widget's public types: what a site's TypeScript sees. This file is the one source of
// dist/svc.d.ts (served at /v1/svc.d.ts): build.mjs type-checks it and writes every type here,
// as written, with its doc comment (/** ... */; line comments stay here), and every type it
// imports (the mascot union generated from the server's list) as `Svc.<Name>` inside
// `declare namespace Svc`, followed by the global `Svc` (an `Api`) and `window.Svc`. The
// implementation uses the same types through types.ts.
//
// Only exported interfaces and type aliases belong here (the build refuses anything else), and
// types come in only by `import type` from local modules. Renaming or removing one changes what
// sites compile against.

import type { Mascot } from './generated/mascots';

export type Shape = 'frame-tab' | 'bubble' | 'tab' | 'pill' | 'blob';
export type Anchor =
  | 'top-left' | 'top-center' | 'top-right'
  | 'middle-left' | 'middle-right'
  | 'bottom-left' | 'bottom-center' | 'bottom-right';

/** Where an element is: css (at most 3 segments), xpath from the body, test ids closest first. */
export interface SelectorInfo {
  css: string;
  xpath: string;
  testIds: string[];
  reactComponent?: string;
  /** 0-based; present when `css` matches several nodes */
  matchIndex?: number;
  /** css of each open shadow host from the document down, each relative to its own root */
  shadowHosts?: string[];
  /** css of each same-origin iframe from the top document down, each relative to its own document */
  frames?: string[];
  /** the element's visible text, white space collapsed, at most 200 characters (never a form field's value) */
  text?: string;
  /** the element's accessible name (aria-labelledby, aria-label, label, alt, title, its text), at most 200 characters */
  accessibleName?: string;
}

/** Artifact-review mode: the artifact every report is about. */
export interface ArtifactMeta {
  /** stable per artifact; at most 200 characters */
  id: string;
  title?: string;
  tool?: string;
  source?: string;
  goal?: string;
  constraints?: string[];
  /** http or https */
  url?: string;
  meta?: Record<string, string>;
}

/** One block of a report. The server overwrites `mime`, `bytes` and a picture's size from the stored upload. */
export type Block =
  | { type: 'text'; text: string }
  | { type: 'file'; blobId: string; name: string; mime?: string; bytes?: number; description?: string }
  | { type: 'selection'; text: string; selector?: string; target?: SelectorInfo }
  | { type: 'quote'; text: string; selector: string; target: SelectorInfo; comment: string }
  | {
      type: 'pinpoint';
      selector: string;
      target: SelectorInfo;
      comment?: string;
      point?: { x: number; y: number };
      rect?: { x: number; y: number; width: number; height: number };
    }
  | { type: 'screenshot'; blobId: string; width?: number; height?: number; mime?: string; bytes?: number; annotations?: unknown[] }
  | { type: 'audio'; blobId: string; durationMs?: number; mime?: string; bytes?: number; transcript?: string };

/** A channel as the widget knows it (ingest form). */
export interface Channel {
  key: string;
  id?: string;
  name?: string;
  color?: string;
  mascot?: Mascot;
  baseWeight?: number;
  archived?: boolean;
  projectId?: string;
  createdAt?: string;
  updatedAt?: string;
  matchers?: Array<{ conditions: Array<{ field: string; op: string; value?: string | string[] }>; weight: number; note?: string }>;
}

export interface BeforeReportResult {
  /** merged over init `extra` into `context.extra` */
  extra?: Record<string, unknown>;
  /** appended as text blocks */
  messages?: string[];
  /** appended verbatim */
  blocks?: Block[];
  /** overrides the channel */
  channelKey?: string;
}

export type FileAttachmentInput = File | Blob | { name: string; content: string | Blob; mime?: string; description?: string };

/** What `Svc.init` accepts. */
export interface InitOptions {
  /** the public project key `pr_...` (required) */
  projectKey: string;
  /** default: from navigator.language */
  locale?: 'en' | 'ru';
  /** ingest base URL; default: the loader script's origin */
  apiUrl?: string;
  /** forwarded with every report */
  userId?: string;
  /** attached to `context.extra` on every submission */
  extra?: Record<string, unknown>;
  /** default true: the last 10 console errors attach to reports */
  captureConsoleErrors?: boolean;
  /** the last 10 failed fetch and XHR requests (method, URL with query values redacted, status, duration, time) travel in `context.network`; default true */
  captureNetworkErrors?: boolean;
  /**
   * default true (unless the project's widgetConfig.recordSteps is false): the last 50 actions on
   * the page (clicks, typing without its values, choices, keys, navigations, scrolls) travel in
   * `context.steps`; nothing inside `[data-svc-mask]` but the fact that something happened there
   */
  recordSteps?: boolean;
  /** default 'fox' */
  mascot?: Mascot;
  /** default 'bubble' */
  shape?: Shape;
  /** default 'middle-right' */
  anchor?: Anchor;
  /** default 'frame-tab'; 'none' is headless (open the panel with openForm()) */
  triggerVariant?: 'frame-tab' | 'devwidget' | 'none';
  /** px, clamped to 32..64; default 44 */
  size?: number;
  /** px, positive is inward; default 0 */
  offsetX?: number;
  offsetY?: number;
  /** id of the host element and namespace of local storage; default derived from projectKey */
  widgetId?: string;
  /** copied into `context.custom` and used by channel matchers (`attr.<name>`) */
  attributes?: Record<string, unknown>;
  /** whenever the active channel changes, including to null */
  onChannelChange?: (next: { key: string } | null, prev: { key: string } | null) => void;
  /** once right before each report is sent; fail-open */
  beforeReport?: () => BeforeReportResult | void | Promise<BeforeReportResult | void>;
  /** a KeyboardEvent.key for push-to-talk while the panel is open */
  pushToTalkKey?: string;
  /** default 'default' */
  mode?: 'default' | 'artifact-review';
  /** used in artifact-review mode */
  artifact?: ArtifactMeta;
  /** a pre-authenticated reporter; pass it on every init */
  reporter?: { token: string; profile: { email: string; name: string; [key: string]: unknown } };
  /** merged over the computed selector info; null or a throw keeps the built-in result */
  selector?: (node: Element) => Partial<SelectorInfo> | null;
  /** tried before data-testid, data-test-id, data-test, data-cy */
  testIdAttributes?: string[];
  /** default [{attr: 'data-qa-data', keys: ['name', 'el']}]; a supplied array replaces it */
  structuredAttributes?: Array<{ attr: string; keys: string[] }>;
  /** default false: true shows the launcher and captures console errors as if the page matched the project's urlPatterns */
  ignoreUrlPatterns?: boolean;
}

/** `report` and `attachFile` reject with this. */
export interface SvcError extends Error {
  /** the ingest error code, or network_error, offline, ... */
  code: string;
  status: number;
  /** the report was kept in the retry queue and will be delivered later */
  queued: boolean;
}

/** One report in History, from local storage only. */
export interface HistoryEntry {
  id: string;
  reportId?: string;
  title: string;
  channelKey?: string;
  at: number;
  /** sent; queued for retry; failed (refused by the server, or undelivered for 24 hours) */
  status: 'sent' | 'queued' | 'failed';
  /** why a failed report was not delivered (an ingest error code, or `expired`) */
  error?: string;
}

/** The global `Svc`. */
export interface Api {
  readonly version: string;
  /** idempotent: a second call tears down and rebuilds with the new options */
  init(options: InitOptions): void;
  /** tears down; a no-op when not initialized */
  destroy(): void;
  isInitialized(): boolean;
  /** one text block (plus file blocks) in the active channel; rejects on failure */
  report(input: { message: string; extra?: Record<string, unknown>; files?: FileAttachmentInput[] }): Promise<{ reportId: string }>;
  /** uploads at once and adds a file block to the draft thread; rejects on failure */
  attachFile(file: FileAttachmentInput): Promise<Block>;
  /** whether the flag is enabled; an enabled flag is added to `context.flags` of later reports */
  alpha(flag: string): Promise<boolean>;
  show(): void;
  hide(): void;
  /** opens the report panel (loaded on demand) */
  openForm(): Promise<void>;
  setAttribute(key: string, value: unknown): void;
  setAttributes(values: Record<string, unknown>): void;
  /** forces the active channel (no weight = 'max') until clearChannel() */
  setChannel(key: string, options?: { weight?: number | 'max' | 'suggest' }): void;
  clearChannel(): void;
  getChannel(): Channel | null;
  getChannels(): Channel[];
  /** the last 20 reports this browser sent for the project plus the queued ones */
  getHistory(): HistoryEntry[];
  /** the SelectorInfo the widget would record for an element (loads the selector code on demand) */
  selectorFor(element: Element): Promise<SelectorInfo>;
  /** widgets of other projects started by a second per-project loader, by project key */
  readonly instances: Record<string, Api>;
}
