/**
 * Every JSON answer of an operation's handler checked against the contract on its way out
 * (VALIDATE_RESPONSES): the status must be one the operation declares, and the body must match
 * that response's schema, or the client gets a 500 and the log says what did not match. It takes
 * the place of express-openapi-validator's response validation (docs/decisions/0019-answer-check.md):
 * called where the answer is sent, instead of replacing `res.json` on every response, and with
 * formats checked for their form only (ajv-formats' fast mode), since every value here is one this
 * server wrote; requests keep the full checks.
 */
import type { Request } from 'express';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { answerAjv, mismatchText } from './kit/answer-ajv.js';
import { listOperations, type OpenApiDocument } from '../kernel/contract.js';

type MediaTypes = Record<string, { schema?: unknown }>;
type ResponseObject = { content?: MediaTypes; $ref?: string };

/** A body the contract does not allow for its operation and status. */
export class AnswerMismatch extends Error {
  override name = 'AnswerMismatch';
}

/** The checks of one contract: compiled once per operation, status and media type, when first needed. */
export function answerChecks(doc: OpenApiDocument) {
  const ajv = answerAjv();

  const components = (doc as { components?: { responses?: Record<string, ResponseObject> } }).components;
  const compiled = new Map<string, ValidateFunction>();
  const validator = (key: string, schema: unknown): ValidateFunction => {
    let v = compiled.get(key);
    if (!v) {
      // Under one root with the components, so the schema's `#/components/...` references resolve.
      v = ajv.compile({ type: 'object', properties: { answer: schema }, components });
      compiled.set(key, v);
    }
    return v;
  };
  const responseOf = (responses: Record<string, ResponseObject>, status: number): ResponseObject | undefined => {
    const found = responses[status] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    const ref = found?.$ref?.replace('#/components/responses/', '');
    return ref ? components?.responses?.[ref] : found;
  };

  /** What is wrong with `body` as operation `operationId`'s answer with `status` and `contentType`, or nothing. */
  return function mismatch(
    operationId: string,
    responses: Record<string, ResponseObject>,
    status: number,
    contentType: string,
    body: unknown,
  ): string | undefined {
    const response = responseOf(responses, status);
    if (!response) return `the contract declares no ${status} answer for ${operationId}`;
    const content = response.content;
    if (!content || Object.keys(content).length === 0)
      return body === undefined ? undefined : `${operationId}'s ${status} answer has no body in the contract`;
    const type = contentType.split(';')[0]!.trim().toLowerCase();
    const media = content[type]
      ? type
      : Object.keys(content).find((t) => t === 'application/json' || t.endsWith('+json'));
    // Only JSON is checked here (the feeds are text, sent another way).
    if (!media || content[media]?.schema === undefined) return undefined;
    if (body === undefined) return `${operationId}'s ${status} answer has a body in the contract, and none was given`;
    const check = validator(`${operationId} ${status} ${media}`, content[media]!.schema);
    if (check({ answer: body })) return undefined;
    return mismatchText(check.errors, '/answer');
  };
}

/** Throws `AnswerMismatch` when `body` is not what the request's operation may answer with `status`. */
export type AnswerCheck = (req: Request, status: number, body: unknown, contentType?: string) => void;

/**
 * The check of `doc`'s answers, for the operation the validator matched. Its responses are read
 * from `doc` by the operation's id, not from `req.openapi`: the validator keeps its own copy of the
 * schemas, rewritten for its own ajv keywords.
 */
export function answerCheck(doc: OpenApiDocument): AnswerCheck {
  const mismatch = answerChecks(doc);
  const responsesOf = new Map(
    listOperations(doc).map((op) => [
      op.operationId,
      (doc.paths[op.path]?.[op.method]?.responses ?? {}) as Record<string, ResponseObject>,
    ]),
  );
  return (req, status, body, contentType = 'application/json') => {
    const operationId = (req.openapi?.schema as { operationId?: string } | undefined)?.operationId;
    const responses = operationId ? responsesOf.get(operationId) : undefined;
    if (!operationId || !responses || status >= 500) return;
    const wrong = mismatch(operationId, responses, status, contentType, body);
    if (wrong) throw new AnswerMismatch(`the answer does not match the contract: ${wrong}`);
  };
}
