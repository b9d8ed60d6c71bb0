/** Who may subscribe to a project's events, where to, and how many: at the service, without a server. */
import { describe, expect, it } from 'vitest';
import { refusal, useServiceDatabase } from './embedded.js';
import { createProject } from '../../src/projects/projects.service.js';
import { addMember } from '../../src/projects/members.service.js';
import { createWebhook, listWebhooks } from '../../src/webhooks/webhooks.service.js';
import { SecretBox } from '../../src/webhooks/secrets.js';

const db = useServiceDatabase();
const box = new SecretBox(Buffer.alloc(32, 7));
const local = { box, urls: { allowLocal: true } };
const strict = { box, urls: { allowLocal: false } };
const hook = (url = 'http://127.0.0.1:9/hook') => ({ url, events: ['milestone.created' as const] });

describe('webhooks at the service', () => {
  it("lets only the project's owner subscribe (to a member there are none), and shows the secret once, sealed at rest", async () => {
    const owner = await db.user();
    const member = await db.user();
    const { id } = await createProject(db.em(), owner.actor, { name: 'Hooked' });
    await addMember(db.em(), owner.actor, id, member.user.username);
    expect(await refusal(createWebhook(db.em(), member.actor, id, hook(), local))).toEqual({
      status: 404,
      code: 'not-found',
    });
    const made = await createWebhook(db.em(), owner.actor, id, hook(), local);
    expect(made.secret).toMatch(/^whsec_/);
    const [stored] = (await db.em().getConnection().execute('select secret from webhook_subscriptions')) as {
      secret: string;
    }[];
    expect(stored!.secret).not.toContain(made.secret);
    expect(box.open(stored!.secret)).toBe(made.secret);
    expect((await listWebhooks(db.em(), owner.actor, id, { limit: 10 })).items[0]).not.toHaveProperty('secret');
  });

  it('refuses a URL it may not deliver to, and an eleventh webhook', async () => {
    const { actor } = await db.user();
    const { id } = await createProject(db.em(), actor, { name: 'Limited' });
    for (const url of ['http://example.com/hook', 'https://127.0.0.1/hook', 'https://user:pw@example.com/hook'])
      expect(await refusal(createWebhook(db.em(), actor, id, hook(url), strict)), url).toEqual({
        status: 422,
        code: 'webhook-url-refused',
      });
    for (let i = 0; i < 10; i++) await createWebhook(db.em(), actor, id, hook(`http://127.0.0.1:9/${i}`), local);
    expect(await refusal(createWebhook(db.em(), actor, id, hook(), local))).toEqual({
      status: 422,
      code: 'webhook-limit-reached',
    });
  });
});
