// Shapes shared by the loader and the lazy parts. The public declarations served at /v1/svc.d.ts
// live in src/svc.d.ts; keep the two in step.

export interface SelectorInfo {
  css: string;
  xpath: string;
  testIds: string[];
  reactComponent?: string;
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

export interface StructuredAttribute {
  attr: string;
  keys: string[];
}

export interface Condition {
  field: string;
  op: string;
  value?: string | string[];
}

export interface Matcher {
  conditions: Condition[];
  weight: number;
  note?: string;
}

/** A channel in the ingest form (the fields the widget uses). */
export interface Channel {
  key: string;
  name?: string;
  color?: string;
  mascot?: string;
  baseWeight?: number;
  matchers?: Matcher[];
  createdAt?: string;
  [more: string]: unknown;
}

export type Weight = number | 'max' | 'suggest';

export interface Hint {
  channelKey: string;
  weight: Weight;
  userId?: string | null;
}

export type Block = { type: string; [field: string]: unknown };

export interface ArtifactMeta {
  id: string;
  title?: string;
  tool?: string;
  source?: string;
  goal?: string;
  constraints?: string[];
  url?: string;
  meta?: Record<string, string>;
}

export interface Reporter {
  token?: string;
  profile?: Record<string, unknown>;
  /** after signing in from the panel: the session that renews the token, and when the token expires */
  session?: string;
  expiresAt?: string;
}

/** What signing in answers (`POST /auth/reporter/email/verify`, the provider popup, `GET /auth/reporter-token`). */
export interface SignInAnswer {
  token: string;
  expiresAt: string;
  session?: string;
  reporter: { id: string; email?: string | null; name?: string | null; method: string };
}

/** One of the reporter's reports as `GET /ingest/reporter/reports` gives it. */
export interface ThreadReport {
  id: string;
  shortId: string;
  title: string;
  status: string;
  createdAt: string;
  lastActivity: string;
  awaitingConfirmation: boolean;
  comments: { id: string; author: { kind: string; label?: string | null }; text: string; publishedAt?: string }[];
}

export interface BeforeReportResult {
  extra?: Record<string, unknown>;
  messages?: string[];
  blocks?: Block[];
  channelKey?: string;
}

export type FileInput = File | Blob | { name: string; content: string | Blob; mime?: string; description?: string };

/** What `Svc.init` accepts. */
export interface InitOptions {
  projectKey: string;
  locale?: 'en' | 'ru';
  apiUrl?: string;
  userId?: string;
  extra?: Record<string, unknown>;
  captureConsoleErrors?: boolean;
  /** the last 10 failed fetch and XHR requests travel in `context.network` (default true) */
  captureNetworkErrors?: boolean;
  mascot?: string;
  shape?: string;
  anchor?: string;
  triggerVariant?: 'frame-tab' | 'devwidget' | 'none';
  size?: number;
  offsetX?: number;
  offsetY?: number;
  widgetId?: string;
  attributes?: Record<string, unknown>;
  onChannelChange?: (next: { key: string } | null, prev: { key: string } | null) => void;
  beforeReport?: () => BeforeReportResult | void | Promise<BeforeReportResult | void>;
  pushToTalkKey?: string;
  mode?: 'default' | 'artifact-review';
  artifact?: ArtifactMeta;
  reporter?: Reporter;
  selector?: (node: Element) => Partial<SelectorInfo> | null;
  testIdAttributes?: string[];
  structuredAttributes?: StructuredAttribute[];
  /** show the launcher and capture as if the page matched `urlPatterns` (Svc's own /demo page) */
  ignoreUrlPatterns?: boolean;
}

/** Project data the per-project loader bakes in (or the shared bundle fetches). */
export interface Preset {
  projectKey: string;
  apiUrl?: string;
  widgetConfig?: Record<string, unknown>;
  urlPatterns?: string[];
  defaultChannelKey?: string;
  channels?: Channel[];
  /** the configured mascot's SVG (per-project loader) */
  mascotSvg?: string;
}

export interface Payload {
  blocks: Block[];
  channelKey?: string;
  context: Record<string, unknown>;
}

export interface HistoryEntry {
  reportId?: string;
  id: string;
  title: string;
  channelKey?: string;
  at: number;
  status: 'sent' | 'queued' | 'failed';
  /** why a failed report was not delivered (an ingest error code) */
  error?: string;
}
