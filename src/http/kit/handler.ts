/**
 * Handlers are keyed by operationId and typed from the generated SDK: the body, path and query
 * a handler receives are the generated request types, and what it replies is the generated
 * success response type. A missing handler is a compile error (see src/routes.ts).
 */
import type { Readable } from 'node:stream';
import type { Request, Response } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import type * as sdk from '../../../codegen/generated/api/sdk.gen.js';
import type { Actor } from '../../kernel/actor.js';

/** Operations with a handler: all but the MCP endpoint, which src/mcp/ serves as JSON-RPC. */
export type OperationId = Exclude<keyof typeof sdk, 'mcpRequest'>;
type OptionsOf<Op extends OperationId> = NonNullable<Parameters<(typeof sdk)[Op]>[0]>;
type Part<T, K extends string> = T extends { [P in K]?: infer V }
  ? undefined extends V
    ? NonNullable<V> | undefined
    : V
  : never;

type SuccessBody<Op extends OperationId> = NonNullable<Awaited<ReturnType<(typeof sdk)[Op]>>['data']>;

type HandlerInput<Op extends OperationId> = {
  body: Part<OptionsOf<Op>, 'body'>;
  path: Part<OptionsOf<Op>, 'path'>;
  query: Part<OptionsOf<Op>, 'query'>;
  /** Set for every operation except the public ones. */
  actor: Actor;
  em: EntityManager;
  req: Request;
  res: Response;
};

export type Reply<Op extends OperationId> =
  | { status: 200 | 201; body: SuccessBody<Op>; headers?: Record<string, string> }
  /** `removed`: what a delete removed, named as it was (its name or title), for the security log. */
  | { status: 204; removed?: string }
  /** A body that is not JSON (the YAML spec, a feed). */
  | { status: 200; text: string; contentType: string; headers?: Record<string, string> }
  /** Bytes streamed as they are (media content); the headers carry the type and length. */
  | { status: 200; stream: Readable; headers: Record<string, string> }
  | { status: 304; headers: Record<string, string> };

export type Handler<Op extends OperationId> = (input: HandlerInput<Op>) => Promise<Reply<Op>>;
export type Handlers = { [Op in OperationId]: Handler<Op> };
export type SomeHandlers<K extends OperationId> = { [Op in K]: Handler<Op> };
