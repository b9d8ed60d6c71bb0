import type { SomeHandlers } from '../http/kit/handler.js';
import { githubActivity, githubLanguages, githubRepos, githubSummary, githubProfile } from './github.service.js';
import { pageLimit } from '../kernel/contract.js';

type Ops = 'getGithubProfile' | 'listGithubRepos' | 'getGithubLanguages' | 'getGithubActivity' | 'getGithubSummary';

export const githubHandlers = {
  getGithubProfile: async ({ em, actor }) => ({
    status: 200,
    body: await githubProfile(em, actor),
  }),
  listGithubRepos: async ({ em, actor, query }) => ({
    status: 200,
    body: await githubRepos(em, actor, { limit: pageLimit(query?.limit), cursor: query?.cursor }),
  }),
  getGithubLanguages: async ({ em, actor }) => ({ status: 200, body: await githubLanguages(em, actor) }),
  getGithubActivity: async ({ em, actor }) => ({ status: 200, body: await githubActivity(em, actor) }),
  getGithubSummary: async ({ em, actor }) => ({ status: 200, body: await githubSummary(em, actor) }),
} satisfies SomeHandlers<Ops>;
