/** The web pages' handler shape: an async page handler whose rejection reaches Express's error handler. */
import type { Request, RequestHandler, Response } from 'express';

export type Handler = (req: Request, res: Response) => Promise<void> | void;

export const wrap =
  (h: Handler): RequestHandler =>
  (req, res, next) => {
    Promise.resolve(h(req, res)).catch(next);
  };

/** A form or query field as a string ('' when absent or not a string). */
export const field = (body: unknown, name: string): string => {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : '';
};
