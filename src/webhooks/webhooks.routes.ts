import type { SomeHandlers } from '../http/kit/handler.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  pingWebhook,
  redeliverWebhook,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookSettings,
} from './webhooks.service.js';
import { pageLimit } from '../kernel/contract.js';

type Ops =
  | 'listWebhooks'
  | 'createWebhook'
  | 'getWebhook'
  | 'updateWebhook'
  | 'deleteWebhook'
  | 'rotateWebhookSecret'
  | 'pingWebhook'
  | 'listWebhookDeliveries'
  | 'redeliverWebhook';

export const webhooksHandlers = (settings: WebhookSettings) =>
  ({
    listWebhooks: async ({ em, actor, path, query }) => ({
      status: 200,
      body: await listWebhooks(em, actor, path.projectId, { limit: pageLimit(query?.limit), cursor: query?.cursor }),
    }),
    createWebhook: async ({ em, actor, path, body, req }) => {
      const created = await createWebhook(em, actor, path.projectId, body, settings);
      return {
        status: 201,
        body: created,
        headers: { Location: `${req.baseUrl}/projects/${path.projectId}/webhooks/${created.id}` },
      };
    },
    getWebhook: async ({ em, actor, path }) => ({
      status: 200,
      body: await getWebhook(em, actor, path.projectId, path.webhookId),
    }),
    updateWebhook: async ({ em, actor, path, body }) => ({
      status: 200,
      body: await updateWebhook(em, actor, path.projectId, path.webhookId, body, settings),
    }),
    deleteWebhook: async ({ em, actor, path }) => {
      const { name } = await deleteWebhook(em, actor, path.projectId, path.webhookId);
      return { status: 204, removed: name };
    },
    rotateWebhookSecret: async ({ em, actor, path, body }) => ({
      status: 200,
      body: await rotateWebhookSecret(em, actor, path.projectId, path.webhookId, body?.overlapHours, settings),
    }),
    pingWebhook: async ({ em, actor, path }) => ({
      status: 201,
      body: await pingWebhook(em, actor, path.projectId, path.webhookId),
    }),
    listWebhookDeliveries: async ({ em, actor, path, query }) => ({
      status: 200,
      body: await listWebhookDeliveries(em, actor, path.projectId, path.webhookId, {
        limit: pageLimit(query?.limit),
        cursor: query?.cursor,
      }),
    }),
    redeliverWebhook: async ({ em, actor, path }) => ({
      status: 201,
      body: await redeliverWebhook(em, actor, path.projectId, path.webhookId, path.deliveryId),
    }),
  }) satisfies SomeHandlers<Ops>;
