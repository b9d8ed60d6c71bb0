/**
 * Every operation of the contract, keyed by operationId. `satisfies Handlers` makes a missing
 * (or misspelt) handler a compile error; src/http/operations.ts makes one at boot too.
 */
import type { Handlers } from './http/handler.js';
import type { OpenApiDocument } from './http/contract.js';
import { metaHandlers } from './http/meta.routes.js';
import { usersHandlers } from './users/users.routes.js';
import { projectsHandlers } from './projects/projects.routes.js';
import { milestonesHandlers } from './milestones/milestones.routes.js';
import { postsHandlers } from './posts/posts.routes.js';
import { commentsHandlers } from './comments/comments.routes.js';
import { platformHandlers } from './platform/platform.routes.js';
import { searchHandlers } from './search/search.routes.js';

export function allHandlers(doc: OpenApiDocument): Handlers {
  return {
    ...metaHandlers(doc),
    ...usersHandlers,
    ...projectsHandlers,
    ...milestonesHandlers,
    ...postsHandlers,
    ...commentsHandlers,
    ...platformHandlers(doc),
    ...searchHandlers,
  } satisfies Handlers;
}
