/** What the CLI's parts share: the parsed options, and the error that means "read the usage". */
export type Values = Record<string, string | boolean | undefined>;

export class UsageError extends Error {}
