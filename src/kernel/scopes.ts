/** The nine scope ids of the product (the scope table in README.md and openapi/openapi.yaml). Nothing implies anything else. */
export const SCOPE_IDS = [
  'content.read',
  'content.write',
  'jobs.read',
  'jobs.write',
  'profile.read',
  'projects.read',
  'projects.write',
  'github.read',
  'radar.read',
] as const;
export type ScopeId = (typeof SCOPE_IDS)[number];

export function isScopeId(value: string): value is ScopeId {
  return (SCOPE_IDS as readonly string[]).includes(value);
}
