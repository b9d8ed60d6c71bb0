import { describe, expect, it } from 'vitest';
import { scrubSql } from '../../src/telemetry/scrub.js';

describe('a statement as a span carries it', () => {
  it('replaces every literal, an inlined key hash among them, and keeps the placeholders and names', () => {
    const hash = 'a'.repeat(64);
    expect(
      scrubSql(
        `select "a0"."id" from "api_keys" as "a0" where "a0"."token_hash" = '${hash}' and "a0"."n" > 10 and x = $1 limit 1`,
      ),
    ).toBe(`select "a0"."id" from "api_keys" as "a0" where "a0"."token_hash" = ? and "a0"."n" > ? and x = $1 limit ?`);
  });

  it('replaces quoted text with doubled quotes, E-strings, dollar-quoted bodies and decimals', () => {
    expect(scrubSql(`values ('it''s', E'a\\nb', E'it\\'s', $$body$$, $tag$x$tag$, 3.5e2, t2.c1)`)).toBe(
      'values (?, ?, ?, ?, ?, ?, t2.c1)',
    );
  });
});
