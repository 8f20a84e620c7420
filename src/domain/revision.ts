/**
 * A message's versions: what its content was at each version and who made
 * it so. Version 1 is the content as created; each edit that changes the
 * content adds one, in the edit's own transaction.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Content, Timestamp, Version } from './message.ts';

export const RevisionSchema = Type.Object(
  {
    version: Version,
    content: Content,
    updatedAt: Timestamp,
    editedBy: Type.Union([Type.String(), Type.Null()], {
      description:
        "Who made this version: the author for version 1; for an edit, the token's subject that made it (an admin may edit), null for an edit made with authentication off or before revisions were kept.",
    }),
  },
  { $id: 'Revision', additionalProperties: false, description: 'One version of a message.' },
);
export type Revision = Static<typeof RevisionSchema>;

export const DEFAULT_REVISION_LIMIT = 100;

/** One page of a message's versions, read in one snapshot with the message. */
export interface RevisionPage {
  /** The message's room, for the access rule. */
  readonly room: string;
  /** At most `limit` versions after the asked one, oldest first. */
  readonly revisions: Revision[];
  /** True when more versions lie beyond this page. */
  readonly more: boolean;
}

/**
 * The version a message has when no edit since revisions were kept stored
 * its versions: version 1 was made by its author; a later one (edited
 * before the upgrade that began keeping revisions) by someone not recorded.
 */
export function currentRevision(m: {
  readonly version: number;
  readonly content: string;
  readonly updatedAt: string;
  readonly author: string;
}): Revision {
  return {
    version: m.version,
    content: m.content,
    updatedAt: m.updatedAt,
    editedBy: m.version === 1 ? m.author : null,
  };
}

/** A revision's values in its table's column order after the message id. */
export function revisionValues(r: Revision): [number, string, string, string | null] {
  return [r.version, r.content, r.updatedAt, r.editedBy];
}

/**
 * The revisions an edit keeps: the version it replaces (when none is kept
 * yet: a first edit, or a message edited before revisions were kept; a store
 * keeps it only if absent) and the new one.
 */
export function editRevisions(
  current: Parameters<typeof currentRevision>[0],
  edited: { readonly version: number; readonly content: string; readonly updatedAt: string },
  editedBy: string | null,
): { readonly replaced: Revision; readonly added: Revision } {
  return {
    replaced: currentRevision(current),
    added: {
      version: edited.version,
      content: edited.content,
      updatedAt: edited.updatedAt,
      editedBy,
    },
  };
}

/**
 * A page of versions after `after` from the message and its kept revisions
 * after `after` (at most limit + 1, oldest first). Once a message is edited
 * its kept revisions include its current version; with none kept, its own
 * row is its only version.
 */
export function revisionPage(
  current: Parameters<typeof currentRevision>[0] & { readonly room: string },
  kept: readonly Revision[],
  after: number,
  limit: number,
): RevisionPage {
  const versions =
    kept.length > 0 ? kept : current.version > after ? [currentRevision(current)] : [];
  return {
    room: current.room,
    revisions: versions.slice(0, limit),
    more: versions.length > limit,
  };
}
