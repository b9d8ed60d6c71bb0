/**
 * Ids are UUIDs in the database. A value that is not one is checked here before it reaches a
 * statement, where the cast would fail: it simply names nothing (a 404, an empty list).
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID.test(value);
