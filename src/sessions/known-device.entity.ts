import { defineEntity, p } from '@mikro-orm/postgresql';
import { uuidv7Key, madeAt } from '../db/columns.js';
import { User } from '../users/user.entity.js';

/**
 * A browser an account has signed in from (its `shipyard_device` cookie; only the SHA-256 of
 * the cookie's secret is stored). A sign-in from it spends the device's own budget rather than
 * its address's, so others at the same address cannot lock its owner out.
 */
const KnownDeviceSchema = defineEntity({
  name: 'KnownDevice',
  tableName: 'known_devices',
  properties: {
    id: uuidv7Key(),
    user: () => p.manyToOne(User).deleteRule('cascade'),
    tokenHash: p.string().length(64).unique(),
    createdAt: madeAt(),
  },
  indexes: [{ name: 'known_devices_user_idx', properties: ['user'] }],
});
export class KnownDevice extends KnownDeviceSchema.class {}
KnownDeviceSchema.setClass(KnownDevice);
