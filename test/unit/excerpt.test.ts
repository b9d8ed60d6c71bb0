import { describe, expect, it } from 'vitest';
import { EXCERPT_LENGTH, excerptOf } from '../../src/posts/excerpt.js';

describe('excerptOf', () => {
  it('keeps the text a reader sees and drops the Markdown and raw HTML', () => {
    const body =
      '# Week 3\n\nCut the **last gear** today. See [the PR](https://x.test/1) and `code`.\n\n- one\n- two\n\n' +
      '<script>alert(1)</script>\n\n![a gear](https://x.test/g.png) Tom &amp; Jerry &#x1F600;\n\n> quoted *words*';
    expect(excerptOf(body)).toBe(
      'Week 3 Cut the last gear today. See the PR and code. one two a gear Tom & Jerry 😀 quoted words',
    );
  });

  it('reads a link or an image whose address holds parentheses as its text alone', () => {
    expect(excerptOf('A [wiki](https://en.wikipedia.org/wiki/Foo_(bar)) b')).toBe('A wiki b');
    expect(excerptOf('A [x](javascript:alert(1)) b')).toBe('A x b');
    expect(excerptOf('![gear (big)](https://x.test/g_(1).png) c')).toBe('gear (big) c');
    // Unbalanced: the link ends at its first closing parenthesis, as before.
    expect(excerptOf('A [x](https://x.test/a) (b) c')).toBe('A x (b) c');
  });

  it('cuts on a word and says it was cut', () => {
    const excerpt = excerptOf('gear '.repeat(200));
    expect(excerpt.length).toBeLessThanOrEqual(EXCERPT_LENGTH + 1);
    expect(excerpt).toMatch(/^(gear )+gear…$/);
  });

  it('cuts one long word where the length ends, never inside a surrogate pair', () => {
    expect(excerptOf('x'.repeat(500))).toBe(`${'x'.repeat(EXCERPT_LENGTH)}…`);
    const emoji = excerptOf(`a${'😀'.repeat(300)}`);
    expect(emoji.endsWith('…')).toBe(true);
    expect(() => encodeURIComponent(emoji)).not.toThrow();
  });

  it('marks a short text cut when the body it came from was longer', () => {
    expect(excerptOf('short', true)).toBe('short…');
    expect(excerptOf('short')).toBe('short');
  });

  it('reads only the start of a long body, whatever it holds', () => {
    const scripts = excerptOf('<script'.repeat(20_000));
    expect(scripts.startsWith('<script<script')).toBe(true);
    expect(scripts.length).toBeLessThanOrEqual(281);
    expect(excerptOf(`${'-'.repeat(50_000)}x`)).toBe('…'); // a rule, and nothing after it within reach
    expect(excerptOf(`${'a'.repeat(599)}😀 more`).endsWith('…')).toBe(true);
    expect(() => encodeURIComponent(excerptOf(`${'a'.repeat(599)}😀 more`))).not.toThrow();
  });

  it('leaves words with underscores and tables readable', () => {
    expect(excerptOf('Set `max_pool_size` in _config_.\n\n| a | b |\n|---|:--:|\n| c | d |')).toBe(
      'Set max_pool_size in config. a b c d',
    );
  });
});
