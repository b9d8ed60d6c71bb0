/**
 * One entry of a feed, from its row: a post or build log (its body as safe HTML, its images), or
 * one of a roadmap's events (a milestone added, done, or moved, with the reason). Every id is a
 * `urn:uuid:`, stable for as long as the entry is: a post's, a milestone's, a due-date change's,
 * and for a milestone done one named after the milestone (nameUuid).
 */
import type { PublicPaths } from '../kernel/public-paths.js';
import { isoString } from '../db/reads.js';
import { postHtml } from '../posts/post-html.js';
import { keptExcerpt } from '../posts/excerpt.js';
import { daysBetween } from '../kernel/days.js';
import { escapeHtml, plural } from '../kernel/text.js';
import type { FeedKind, FeedRow } from './feeds.queries.js';
import { createHash } from 'node:crypto';

export type FeedEntry = {
  id: string;
  kind: FeedKind;
  /** Plain text. */
  title: string;
  url: string;
  /** Safe HTML: escaped or sanitised (src/posts/post-html.ts). */
  html: string;
  /** Plain text. */
  summary: string;
  published: Date;
  updated: Date;
  author: { name: string; url: string };
  tags: string[];
  images: string[];
};

export function entryOf(row: FeedRow, paths: PublicPaths): FeedEntry {
  const common = {
    kind: row.kind,
    published: new Date(isoString(row.at)),
    updated: new Date(isoString(row.updated)),
    author: { name: row.displayName, url: paths.user(row.username) },
  };
  const project = row.projectId;
  switch (row.kind) {
    case 'milestone_added': {
      const due = row.toDate ? ` Due ${row.toDate}.` : '';
      return {
        ...common,
        id: `urn:uuid:${row.key}`,
        title: `Milestone added: ${row.title}`,
        url: paths.milestone(project!, row.milestoneId ?? row.key),
        html: `<p>A milestone was added to the roadmap of ${escapeHtml(row.projectName ?? '')}: <strong>${escapeHtml(row.title)}</strong>.${escapeHtml(due)}</p>${row.body ? postHtml(row.body) : ''}`,
        summary: `Added to the roadmap: ${row.title}.${due}`,
        tags: [row.kind],
        images: [],
      };
    }
    case 'milestone_done':
      return {
        ...common,
        id: `urn:uuid:${nameUuid(`milestone-done:${row.key}`)}`,
        title: `Milestone done: ${row.title}`,
        url: paths.milestone(project!, row.milestoneId ?? row.key),
        html: `<p>A milestone of ${escapeHtml(row.projectName ?? '')} is done: <strong>${escapeHtml(row.title)}</strong>.</p>${row.body ? postHtml(row.body) : ''}`,
        summary: `Done: ${row.title}.`,
        tags: [row.kind],
        images: [],
      };
    case 'milestone_moved': {
      const move = moveText(row.fromDate, row.toDate);
      const reason = row.reason ? ` Reason: ${row.reason}` : '';
      return {
        ...common,
        id: `urn:uuid:${row.key}`,
        title: `Milestone moved: ${row.title}`,
        url: paths.milestone(project!, row.milestoneId ?? row.key),
        html: `<p>The due date of <strong>${escapeHtml(row.title)}</strong> (${escapeHtml(row.projectName ?? '')}) ${escapeHtml(move)}.</p>${row.reason ? `<p>Reason: ${escapeHtml(row.reason)}</p>` : ''}`,
        summary: `${row.title}: due date ${move}.${reason}`,
        tags: [row.kind],
        images: [],
      };
    }
    default: {
      const body = row.body ?? '';
      const images = (row.mediaIds ?? []).map((id: string) => paths.media(id));
      const shown = images.map((src: string) => `<p><img src="${escapeHtml(src)}" alt="" loading="lazy"></p>`).join('');
      const onProject =
        row.kind === 'build_log' && project && row.projectName
          ? `<p>A build log of <a href="${escapeHtml(paths.project(project))}">${escapeHtml(row.projectName)}</a>.</p>`
          : '';
      return {
        ...common,
        id: `urn:uuid:${row.key}`,
        title: row.title,
        url: paths.post(row.key),
        html: `${onProject}${postHtml(body)}${shown}`,
        summary: keptExcerpt(`${row.key} ${common.updated.toISOString()}`, body),
        tags: [row.kind, ...(row.tags ?? [])],
        images,
      };
    }
  }
}

/** "moved from 2027-03-01 to 2027-04-15 (45 days later)", or its removal. */
function moveText(from: string | null, to: string | null): string {
  if (!from) return `was set to ${to}`;
  if (!to) return `was removed (it was ${from})`;
  const days = daysBetween(from, to);
  const by = days === 0 ? '' : ` (${plural(Math.abs(days), 'day')} ${days > 0 ? 'later' : 'earlier'})`;
  return `moved from ${from} to ${to}${by}`;
}

/** A UUID named by `name` (RFC 9562's version 5 layout): the same name, the same id, forever. */
export function nameUuid(name: string): string {
  const hash = createHash('sha1').update(`shipyard-feed:${name}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
