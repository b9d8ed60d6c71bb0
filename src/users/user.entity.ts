import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';

const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.uuid().primary().onCreate(() => uuidv7()),
    username: p.string().length(39).unique(),
    email: p.string().length(254).unique(),
    displayName: p.string().length(100),
    bio: p.text().default(''),
    skills: p.array().default([]),
    /** scrypt hash (`scrypt$N$r$p$salt$hash`), null for an account that cannot sign in yet. */
    passwordHash: p.string().length(255).nullable().hidden(),
    isAdmin: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class User extends UserSchema.class {}
UserSchema.setClass(User);
