import type { User as UserDto, UserSummary } from '../../codegen/generated/api/types.gen.js';
import type { User } from './user.entity.js';

export function presentUser(user: User): UserDto {
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
    createdAt: user.createdAt.toISOString(),
  };
}

export function presentUserSummary(user: Pick<User, 'id' | 'username' | 'displayName'>): UserSummary {
  return { id: user.id, username: user.username, displayName: user.displayName };
}
