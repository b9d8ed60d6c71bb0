/**
 * The public web addresses of what anybody may read without a key: a project's page, a person's,
 * a post's, an image's, and the feeds. One place builds them, on the site's address
 * (PUBLIC_URL), so the pages, the feeds and the API answers that hand them out agree.
 */
import { API_BASE } from './contract.js';

export type PublicPaths = ReturnType<typeof publicPaths>;

/** A project's or a person's page and both its feeds, as the API hands them out. */
export type PublicUrls = { page: string; atomFeed: string; jsonFeed: string };

export function publicPaths(site: string) {
  return {
    home: () => `${site}/`,
    project: (projectId: string) => `${site}/p/${projectId}`,
    user: (username: string) => `${site}/u/${encodeURIComponent(username)}`,
    post: (postId: string) => `${site}/posts/${postId}`,
    media: (mediaId: string) => `${site}/media/${mediaId}`,
    milestone: (projectId: string, milestoneId: string) => `${site}/p/${projectId}#milestone-${milestoneId}`,
    projectUrls: (projectId: string): PublicUrls => ({
      page: `${site}/p/${projectId}`,
      atomFeed: `${site}${API_BASE}/feeds/projects/${projectId}.atom`,
      jsonFeed: `${site}${API_BASE}/feeds/projects/${projectId}.json`,
    }),
    userUrls: (username: string): PublicUrls => ({
      page: `${site}/u/${encodeURIComponent(username)}`,
      atomFeed: `${site}${API_BASE}/feeds/users/${encodeURIComponent(username)}.atom`,
      jsonFeed: `${site}${API_BASE}/feeds/users/${encodeURIComponent(username)}.json`,
    }),
  };
}
