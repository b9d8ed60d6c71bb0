/**
 * A refused body's unknown fields, named at any depth with what they likely misspell, and said
 * within bounds whatever the body holds (src/http/unknown-fields.ts), on the served contract.
 */
import { describe, expect, it } from 'vitest';
import { MAX_NAMED, unknownFields } from '../../src/http/unknown-fields.js';
import { SERVED } from '../../src/kernel/contract.js';
import { meant } from '../../src/kernel/text.js';

const unknown = unknownFields(SERVED);

describe("a refused body's unknown fields", () => {
  it('are named at the top and inside objects and lists, with the field each likely misspells', () => {
    const { named, more } = unknown('createPost', {
      kind: 'build_log',
      titel: 'x',
      links: [{ url: 'https://example.com/pull/1' }, { url: 'https://example.com/pull/2', knd: 'commit' }],
    });
    expect(named.map(({ path, message }) => ({ path, message }))).toEqual([
      { path: '/body/titel', message: "is not a field of this body; did you mean 'title'?" },
      { path: '/body/links/1/knd', message: "is not a field of this object; did you mean 'kind'?" },
    ]);
    expect(more).toBe(0);
  });

  it('escape a name as a JSON Pointer token, so that a slash is not read as a level', () => {
    const { named } = unknown('createProject', { name: 'x', 'a/b': 1, 'c~d': 2 });
    expect(named.map((n) => n.path)).toEqual(['/body/a~1b', '/body/c~0d']);
    // Where the validator says the same place: the name as it is.
    expect(named.map((n) => n.at)).toEqual(['/body/a/b', '/body/c~d']);
  });

  it(`name ${MAX_NAMED} at most and count the rest, and repeat no more than the start of a long name`, () => {
    const body = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`field${i}`, i]));
    const many = unknown('createProject', { name: 'x', ...body });
    expect(many.named).toHaveLength(MAX_NAMED);
    expect(many.more).toBe(5_000 - MAX_NAMED);
    const long = unknown('createProject', { name: 'x', ['a'.repeat(1_000_000)]: 1 });
    expect(long.named[0]!.path).toBe(`/body/${'a'.repeat(100)}…`);
    expect(long.named[0]!.message).toBe('is not a field of this body');
  });

  it('look for a misspelling only among names of about the same length', () => {
    // A long name is never compared character by character with the fields (that costs both lengths).
    expect(meant('n'.repeat(1_000_000), ['name', 'tagline'])).toBeUndefined();
    expect(meant('nam', ['name'])).toBe('name');
  });

  it('leave alone what the contract does not close, and operations without a JSON body', () => {
    expect(unknown('uploadMedia', { extra: 1 })).toEqual({ named: [], more: 0 });
    expect(unknown('noSuchOperation', { extra: 1 })).toEqual({ named: [], more: 0 });
    expect(unknown('createProject', 'not an object')).toEqual({ named: [], more: 0 });
  });
});
