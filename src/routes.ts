/**
 * Every operation of the contract, keyed by operationId. `satisfies Handlers` makes a missing
 * (or misspelt) handler a compile error; src/http/operations.ts makes one at boot too.
 */
import type { Handlers } from './http/kit/handler.js';
import type { OpenApiDocument } from './kernel/contract.js';
import { metaHandlers } from './http/meta.routes.js';
import { usersHandlers } from './users/users.routes.js';
import { projectsHandlers } from './projects/projects.routes.js';
import { milestonesHandlers } from './milestones/milestones.routes.js';
import { postsHandlers } from './posts/posts.routes.js';
import { commentsHandlers } from './comments/comments.routes.js';
import { reactionsHandlers } from './reactions/reactions.routes.js';
import { platformHandlers } from './platform/platform.routes.js';
import { searchHandlers } from './search/search.routes.js';
import { mediaHandlers } from './media/media.routes.js';
import { jobsHandlers } from './jobs/jobs.routes.js';
import { githubHandlers } from './github/github.routes.js';
import { radarHandlers } from './radar/radar.routes.js';
import { moderationHandlers } from './moderation/moderation.routes.js';
import { webhooksHandlers } from './webhooks/webhooks.routes.js';
import { feedsHandlers } from './feeds/feeds.routes.js';
import type { WebhookSettings } from './webhooks/webhooks.service.js';
import type { MediaStorage } from './media/storage.js';
import type { MediaLimits } from './media/media.service.js';
import type { RateLimits } from './kernel/limits.js';
import type { Logger } from './kernel/logger.js';
import type { SearchCache } from './search/search-cache.js';
import type { SearchPage } from '../codegen/generated/api/types.gen.js';

export function allHandlers(
  doc: OpenApiDocument,
  deps: {
    storage: MediaStorage;
    media: MediaLimits;
    limits: RateLimits;
    searchCache: SearchCache<SearchPage>;
    countsCacheSeconds: number;
    keyMaxDays?: number;
    webhooks: WebhookSettings;
    /** The site's address (PUBLIC_URL), that feeds link to. */
    site: string;
    log: Logger;
  },
): Handlers {
  return {
    ...metaHandlers(doc),
    ...usersHandlers,
    ...projectsHandlers,
    ...milestonesHandlers,
    ...postsHandlers,
    ...commentsHandlers,
    ...reactionsHandlers,
    ...platformHandlers(doc, deps.media, deps.limits, deps.countsCacheSeconds, deps.keyMaxDays),
    ...searchHandlers(deps.searchCache),
    ...jobsHandlers,
    ...githubHandlers,
    ...radarHandlers,
    ...moderationHandlers,
    ...webhooksHandlers(deps.webhooks),
    ...mediaHandlers(deps.storage, deps.media),
    ...feedsHandlers(deps.site, deps.log),
  } satisfies Handlers;
}
