/**
 * Columns many entities share, written once: a key made in the process as a UUIDv7 (time-ordered:
 * an id's order is its row's creation order, which the cursors rely on), and the times a row was
 * made and last changed.
 */
import { p } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';

/** The primary key, a UUIDv7 made when the entity is created. */
export const uuidv7Key = () =>
  p
    .uuid()
    .primary()
    .onCreate(() => uuidv7());

/** When the row was made. */
export const madeAt = () => p.datetime().onCreate(() => new Date());

/** When the row was made and when it last changed (each flush that changes it). */
export const changeTimes = () => ({
  createdAt: madeAt(),
  updatedAt: p
    .datetime()
    .onCreate(() => new Date())
    .onUpdate(() => new Date()),
});
