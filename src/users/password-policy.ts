/**
 * What a new password must be, after NIST SP 800-63B (revision 4, passwords as the only
 * factor): at least 15 characters and at most 1024, any characters, no composition rules (no
 * "one digit, one symbol"), and not one an attacker tries early:
 * - zxcvbn-ts (its common-password, name and word lists, and its patterns: repeats, sequences,
 *   keyboard walks, dates, l33t) must estimate at least 10^10 guesses, the account's own words
 *   counted as known;
 * - it is not mostly a run of keys typed one after another (along the keyboard, the alphabet
 *   or the digits, spaced out or interleaved), nor a famous example passphrase;
 * - it does not contain the username, the name part of the email or the service's name,
 *   forwards or backwards, however it is spelled: case, spacing, accents, l33t digits and
 *   look-alike letters from other scripts are all seen through.
 * Every reason is given at once. zxcvbn weighs the first 64 characters (NIST's least maximum)
 * and tries at most 16 l33t readings of them: its matching grows with the square of the length
 * and with every reading, to seconds for a long password (docs/security.md). So a password whose
 * first 64 characters are guessable is refused whatever follows them; the name and run checks
 * read all of it.
 */
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';

export const PASSWORD_MIN = 15;
export const PASSWORD_MAX = 1024;
/** How much of a password zxcvbn weighs, and how many l33t readings of it (its defaults: 256 and 100). */
const ZXCVBN_LIMITS = { maxLength: 64, l33tMaxSubstitutions: 16 };
/** zxcvbn's score 4: "very unguessable" (at least 10^10 guesses). */
const MIN_SCORE = 4;
const SERVICE_WORDS = ['shipyard'];
/** Passphrases made famous as examples, which every guessing list now carries. */
const FAMOUS = ['correcthorsebatterystaple', 'thequickbrownfoxjumpsoverthelazydog', 'loremipsumdolorsitamet'];

type Checker = { zxcvbn: ZxcvbnFactory; qwerty: Record<string, (string | null)[]> };
// Loaded and built on first use (the password thread's is at its start, loadPasswordChecker):
// zxcvbn's dictionaries take a moment, which a CLI command that checks no password should not wait for.
let checker: Promise<Checker> | undefined;
const loadChecker = () =>
  (checker ??= (async () => {
    const [{ ZxcvbnFactory }, common, en] = await Promise.all([
      import('@zxcvbn-ts/core'),
      import('@zxcvbn-ts/language-common'),
      import('@zxcvbn-ts/language-en'),
    ]);
    return {
      zxcvbn: new ZxcvbnFactory({
        dictionary: { ...common.dictionary, ...en.dictionary },
        graphs: common.adjacencyGraphs,
        translations: en.translations,
        ...ZXCVBN_LIMITS,
      }),
      qwerty: common.adjacencyGraphs.qwerty as Record<string, (string | null)[]>,
    };
  })());

/** Letters from other scripts that look like Latin ones, and the digits and signs l33t uses for letters. */
const LOOK_ALIKE: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  ѕ: 's',
  і: 'i',
  ј: 'j',
  ԁ: 'd',
  α: 'a',
  β: 'b',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  '0': 'o',
  '1': 'i',
  l: 'i',
  '|': 'i',
  '!': 'i',
  '3': 'e',
  '4': 'a',
  '@': 'a',
  '5': 's',
  $: 's',
  '7': 't',
  '8': 'b',
  '9': 'g',
};

/** What a text looks like, whatever spelling hides it: case, accents, look-alikes and l33t folded, only letters and digits kept. */
function skeleton(text: string): string {
  const folded = text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  return [...folded]
    .map((c) => LOOK_ALIKE[c] ?? c)
    .join('')
    .replace(/[^a-z0-9]/g, '');
}

/** Loads and builds the checker now: the password thread does as it starts, so the first sign-up does not wait for it. */
export async function loadPasswordChecker(): Promise<void> {
  await loadChecker();
}

const ORDERS = ['abcdefghijklmnopqrstuvwxyz', '01234567890'];
const inOrder = (a: string, b: string) =>
  ORDERS.some((order) => {
    const i = order.indexOf(a);
    return i >= 0 && (order[i + 1] === b || order[i - 1] === b);
  });
/** Keys one after another: keyboard neighbours (zxcvbn's qwerty graph), the alphabet and the digits, either way. */
const follows = (qwerty: Checker['qwerty'], a: string, b: string) =>
  a === b || inOrder(a, b) || Boolean(qwerty[a]?.some((keys) => keys?.includes(b)));
/** Walks down the keyboard's columns, which zxcvbn takes for several short walks. */
const COLUMN_WALKS = ['1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p', 'zaq1xsw2cde3vfr4bgt5nhy6mju7ki8lo9p0'].flatMap(
  (walk) => {
    const letters = walk.replace(/\d/g, '');
    return [walk, letters, [...walk].reverse().join(''), [...letters].reverse().join('')];
  },
);

/**
 * Whether the password is mostly keys typed one after another: it walks down the keyboard's
 * columns, or seven in ten of its characters continue a run from the one before (a repeat, a
 * keyboard neighbour, the next letter or digit) or, interleaved, from the one before that
 * (`1a2b3c…`). The runs are looked for only in passwords that are not mostly words, whose
 * letters often sit side by side on the keyboard by chance.
 */
function isMostlyARun(qwerty: Checker['qwerty'], password: string, wordChars: number): boolean {
  const keys = [...password.toLowerCase().replace(/[\s._-]/g, '')];
  if (keys.length < 8) return false;
  const plain = keys.join('').replace(/[^a-z0-9]/g, '');
  if (plain.length >= 8 && COLUMN_WALKS.some((walk) => walk.includes(plain))) return true;
  if (wordChars * 2 >= keys.length) return false;
  let predictable = 0;
  for (let i = 1; i < keys.length; i++) {
    if (follows(qwerty, keys[i - 1]!, keys[i]!) || (i >= 2 && inOrder(keys[i - 2]!, keys[i]!))) predictable++;
  }
  return predictable >= 0.7 * (keys.length - 1);
}

/** Whether some stretch of `text` is `name` with at most one letter changed (for names of five letters or more). */
function nearly(text: string, name: string): boolean {
  if (name.length < 5) return text.includes(name);
  for (let at = 0; at + name.length <= text.length; at++) {
    let differences = 0;
    for (let i = 0; i < name.length && differences <= 1; i++) if (text[at + i] !== name[i]) differences++;
    if (differences <= 1) return true;
  }
  return false;
}

function containsName(password: string, account: { username: string; email: string }): boolean {
  const text = skeleton(password);
  const names = [account.username, account.email.split('@')[0] ?? '', ...SERVICE_WORDS]
    .map(skeleton)
    .filter((n) => n.length >= 3);
  return names.some((n) => nearly(text, n) || nearly(text, [...n].reverse().join('')));
}

/** A check with passwordProblems' contract, wherever it runs (the server and the CLI run it on its own thread: src/users/password-thread.ts). */
export type PasswordCheck = (password: string, account: { username: string; email: string }) => Promise<string[]>;

export async function passwordProblems(
  password: string,
  account: { username: string; email: string },
): Promise<string[]> {
  const problems: string[] = [];
  const length = [...password].length;
  if (length < PASSWORD_MIN) {
    problems.push(
      `Password: at least ${PASSWORD_MIN} characters (this one has ${length}). A few unrelated words make a good one.`,
    );
  }
  // Too long says all: nothing more is looked for in it.
  if (length > PASSWORD_MAX) return [`Password: at most ${PASSWORD_MAX} characters.`];
  if (!password.trim()) return [...problems, 'Password: not only spaces.'];
  if (containsName(password, account)) {
    problems.push(
      'Password: it must not contain your username, your email address or the name of this service, however it is spelled.',
    );
  }
  const { zxcvbn, qwerty } = await loadChecker();
  const result = zxcvbn.check(password, [account.username, account.email, ...SERVICE_WORDS]);
  const wordChars = result.sequence
    .filter((m) => m.pattern === 'dictionary' && m.dictionaryName !== 'passwords-common' && m.token.length >= 4)
    .reduce((n, m) => n + m.token.length, 0);
  const run = isMostlyARun(qwerty, password, wordChars);
  if (result.score < MIN_SCORE || run || FAMOUS.some((phrase) => skeleton(phrase) === skeleton(password))) {
    const why = run
      ? 'It is mostly keys typed one after another.'
      : (result.feedback.warning ?? 'It is a phrase every guessing list has.');
    problems.push(`Password: an attacker would try it early. ${why} Add more unrelated words, or choose another.`);
  }
  return problems;
}
