import { resourceGoneTrigger, searchChangedTrigger } from '../db/triggers.js';
import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, changeTimes } from '../db/columns.js';
import { TextArrayType } from '../db/text-array.js';
import { User } from '../users/user.entity.js';
import { HEALTHS, Project } from '../projects/project.entity.js';
import type { BuildLogLinkInput } from '../../codegen/generated/api/types.gen.js';

const POST_KINDS = ['post', 'build_log'] as const;

const PostSchema = defineEntity({
  name: 'Post',
  tableName: 'posts',
  properties: {
    id: uuidv7Key(),
    author: () => p.manyToOne(User).deleteRule('cascade'),
    kind: p.enum(POST_KINDS).default('post'),
    title: p.string().length(200),
    body: p.text(),
    tags: p.type(TextArrayType).default([]),
    /** Ids of images (media) shown with the post, in order; all uploaded by the author. */
    mediaIds: p.type(TextArrayType).default([]),
    project: () => p.manyToOne(Project).nullable().deleteRule('set null'),
    /** A build log only: the project's health it reports (a status update), or null. */
    health: p.enum(HEALTHS).nullable(),
    /** A build log only: ids of the milestones of its project it moved forward. */
    milestoneIds: p.type(TextArrayType).default([]),
    /** A build log only: the commits, pull requests or releases it links to. */
    links: p.json<BuildLogLinkInput[]>().default([]),
    commentCount: p.integer().default(0),
    reactionCount: p.integer().default(0),
    hiddenAt: p.datetime().nullable(),
    /** Full-text search vector kept by PostgreSQL (migration ..._search); written as PostgreSQL prints it so the schema diff stays clean. */
    search: p
      .type('tsvector')
      .generated(
        `(((setweight(to_tsvector('english'::regconfig, (COALESCE(title, ''::character varying))::text), 'A'::"char") || setweight(to_tsvector('english'::regconfig, shipyard_words(tags)), 'B'::"char")) || setweight(to_tsvector('english'::regconfig, COALESCE(body, ''::text)), 'C'::"char"))) stored`,
      )
      .lazy()
      .nullable()
      .hidden(),
    ...changeTimes(),
  },
  indexes: [
    { name: 'posts_project_kind_idx', properties: ['project', 'kind', 'id'] },
    { name: 'posts_author_idx', properties: ['author'] },
    /** Migration ..._search_changes: whether a person has hidden posts, without reading all of theirs. */
    { name: 'posts_author_hidden_idx', properties: ['author'], where: 'hidden_at is not null' },
    { name: 'posts_search_idx', properties: ['search'], type: 'gin' },
    /** Migration ..._media_access: the posts that show an image (who may read it follows them). */
    { name: 'posts_media_ids_idx', properties: ['mediaIds'], type: 'gin' },
    /** Migration ..._roadmap_evidence: the build logs that name a milestone (its count on the roadmap). */
    { name: 'posts_milestone_ids_idx', properties: ['milestoneIds'], type: 'gin' },
  ],
  triggers: [searchChangedTrigger('posts', 'search, hidden_at, project_id, author_id'), resourceGoneTrigger('posts')],
});
export class Post extends PostSchema.class {}
PostSchema.setClass(Post);
