/**
 * The public web addresses of what anybody may read without a key: a project's page, a person's,
 * a post's, an image's, and the feeds. One place builds them, on the site's address
 * (PUBLIC_URL), so the pages, the feeds and the API answers that hand them out agree.
 */
export type PublicPaths = ReturnType<typeof publicPaths>;

export function publicPaths(site: string) {
  return {
    home: () => `${site}/`,
    project: (projectId: string) => `${site}/p/${projectId}`,
    user: (username: string) => `${site}/u/${encodeURIComponent(username)}`,
    post: (postId: string) => `${site}/posts/${postId}`,
    media: (mediaId: string) => `${site}/media/${mediaId}`,
    milestone: (projectId: string, milestoneId: string) => `${site}/p/${projectId}#milestone-${milestoneId}`,
  };
}
