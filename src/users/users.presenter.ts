import type { User as UserDto, UserSummary } from '../../codegen/generated/api/types.gen.js';
import type { User } from './user.entity.js';
import { isoString, type Timestamp } from '../db/reads.js';
import { publicPaths } from '../kernel/public-paths.js';

/** What the presenter reads: a User entity, or a row of a typed read (its timestamp as text). */
export type UserFields = Pick<User, 'id' | 'username' | 'displayName' | 'bio' | 'skills'> & {
  avatarMediaId?: string | null;
  location?: string | null;
  website?: string | null;
  githubLogin?: string | null;
  createdAt: Timestamp;
};

/** The profile as the API shows it; `site` is the server's public address (the page and feed URLs). */
export function presentUser(user: UserFields, site: string): UserDto {
  return {
    id: user.id,
    username: user.username,
    displayName: user.displayName,
    bio: user.bio,
    skills: user.skills,
    avatarMediaId: user.avatarMediaId ?? null,
    location: user.location ?? null,
    website: user.website ?? null,
    githubLogin: user.githubLogin ?? null,
    publicUrls: publicPaths(site).userUrls(user.username),
    createdAt: isoString(user.createdAt),
  };
}

export function presentUserSummary(user: Pick<User, 'id' | 'username' | 'displayName'>): UserSummary {
  return { id: user.id, username: user.username, displayName: user.displayName };
}
