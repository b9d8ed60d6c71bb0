// The explicit entity list (no folder discovery: fast start, nothing hidden).
import { User } from '../users/user.entity.js';
import { ApiKey } from '../keys/api-key.entity.js';
import { KeySighting } from '../keys/key-sighting.entity.js';
import { SecurityEvent } from '../security-log/security-event.entity.js';
import { Project, ProjectMember } from '../projects/project.entity.js';
import { Milestone } from '../milestones/milestone.entity.js';
import { RoadmapWalk } from '../milestones/roadmap-walk.entity.js';
import { MilestoneDueDateChange } from '../milestones/due-date-change.entity.js';
import { Post } from '../posts/post.entity.js';
import { Comment } from '../comments/comment.entity.js';
import { Media } from '../media/media.entity.js';
import { Reaction } from '../reactions/reaction.entity.js';
import { Job } from '../jobs/job.entity.js';
import { GithubAccount, GithubRepo } from '../github/github.entity.js';
import { IdempotencyRecord } from '../idempotency/idempotency.entity.js';
import { Session } from '../sessions/session.entity.js';
import { KnownDevice } from '../sessions/known-device.entity.js';
import { OAuthClient } from '../oauth/oauth-client.entity.js';
import { OAuthGrant } from '../oauth/oauth-grant.entity.js';
import { WebhookEvent } from '../outbox/event.entity.js';
import { WebhookAttempt, WebhookDelivery, WebhookSubscription } from '../webhooks/webhook.entity.js';
import { FeedMark } from '../feeds/feed-mark.entity.js';

export const entities = [
  User,
  ApiKey,
  KeySighting,
  SecurityEvent,
  Project,
  ProjectMember,
  Milestone,
  RoadmapWalk,
  MilestoneDueDateChange,
  Post,
  Comment,
  Media,
  Reaction,
  Job,
  GithubAccount,
  GithubRepo,
  IdempotencyRecord,
  Session,
  KnownDevice,
  OAuthClient,
  OAuthGrant,
  WebhookSubscription,
  WebhookEvent,
  WebhookDelivery,
  WebhookAttempt,
  FeedMark,
];
