import { describe, expect, it } from 'vitest';
import { findDuplicateOrLoneSurrogate } from '../../src/http/kit/json-body.js';

describe('findDuplicateOrLoneSurrogate', () => {
  it('accepts JSON without duplicate keys or lone surrogates', () => {
    for (const text of [
      '{}',
      '[]',
      '"x"',
      '{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}',
      '{"a":"\\"b\\"","b":"\\ud83d\\ude80"}',
      '[{"a":1},{"a":1}]',
    ]) {
      expect(findDuplicateOrLoneSurrogate(text), text).toBeUndefined();
    }
  });
  it('finds a key written twice, however it is escaped, and says where', () => {
    expect(findDuplicateOrLoneSurrogate('{"visibility":"private","visibility":"public"}')).toBe(
      'the key "visibility" appears twice in the object at /',
    );
    expect(findDuplicateOrLoneSurrogate('{"a":{"b":1,"\\u0062":2}}')).toBe(
      'the key "b" appears twice in the object at /a',
    );
    expect(findDuplicateOrLoneSurrogate('{"l":[1,{"x":1,"x":1}]}')).toBe(
      'the key "x" appears twice in the object at /l/1',
    );
    expect(findDuplicateOrLoneSurrogate('{"a/b":{"k":1,"k":2}}')).toBe(
      'the key "k" appears twice in the object at /a~1b',
    );
  });
  it('finds a lone surrogate written as an escape', () => {
    expect(findDuplicateOrLoneSurrogate('{"name":"a\\ud800"}')).toMatch(/lone surrogate .* string at \/name$/);
    expect(findDuplicateOrLoneSurrogate('["ok","\\udc00"]')).toMatch(/string at \/1$/);
    expect(findDuplicateOrLoneSurrogate('{"\\udfff":1}')).toMatch(/in a key at \/$/);
  });
});
