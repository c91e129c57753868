// Shapes shared by the loader and the lazy parts. The public ones (what a site's TypeScript sees)
// are written once, in public.ts, which dist/svc.d.ts is generated from; they are re-exported here
// with the internal ones.

import type { Channel, InitOptions } from './public';

export type { Anchor, Api, ArtifactMeta, BeforeReportResult, Block, Channel, FileAttachmentInput, HistoryEntry, InitOptions, SelectorInfo, Shape, SvcError } from './public';
export type { Mascot } from './generated/mascots';

export type StructuredAttribute = NonNullable<InitOptions['structuredAttributes']>[number];
export type Matcher = NonNullable<Channel['matchers']>[number];
export type Condition = Matcher['conditions'][number];

export type Weight = number | 'max' | 'suggest';

export interface Hint {
  channelKey: string;
  weight: Weight;
  userId?: string | null;
}

/**
 * A block as the widget stores and sends it: drafts and queued reports in local storage may come
 * from another widget version, so fields are read defensively. Every public `Block` is one.
 */
export type RawBlock = { type: string; [field: string]: unknown };

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
  blocks: RawBlock[];
  channelKey?: string;
  context: Record<string, unknown>;
}
