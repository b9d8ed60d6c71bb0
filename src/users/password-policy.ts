/**
 * What a new password must be, after NIST SP 800-63B (revision 4, passwords as the only
 * factor): at least 15 characters and at most 1024, any characters, no composition rules (no
 * "one digit, one symbol"), and not one an attacker tries first: a common password (the
 * blocklist of zxcvbn-ts, shipped in its npm package), a common password with digits or
 * symbols around it, a short run repeated or typed in sequence, the name of the service,
 * or anything containing the account's username or the name part of its email. Every reason
 * is given at once.
 */
import { dictionary } from '@zxcvbn-ts/language-common';

export const PASSWORD_MIN = 15;
export const PASSWORD_MAX = 1024;

const COMMON = new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()));
const SERVICE_WORDS = ['shipyard'];
/** Runs typed by sliding along the keys: digits, the alphabet, keyboard rows and columns (either way). */
const SEQUENCES = ['0123456789', 'abcdefghijklmnopqrstuvwxyz', 'qwertyuiopasdfghjklzxcvbnm', '1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p']
  .flatMap((s) => [s, [...s].reverse().join('')]);

/** `1234567890123456`, `abcdefghijklmnop`, `poiuytrewq…`: a run along a sequence, wrapping round. */
const isSequential = (lower: string): boolean =>
  SEQUENCES.some((seq) => seq.repeat(Math.ceil(lower.length / seq.length) + 1).includes(lower));

/** `abcabcabc` → `abc`: the shortest run the password repeats, if it is made of one. */
function repeatedUnit(password: string): string | undefined {
  for (let size = 1; size <= password.length / 2; size++) {
    if (password.length % size !== 0) continue;
    const unit = password.slice(0, size);
    if (unit.repeat(password.length / size) === password) return unit;
  }
  return undefined;
}

export function passwordProblems(password: string, account: { username: string; email: string }): string[] {
  const problems: string[] = [];
  const length = [...password].length;
  if (length < PASSWORD_MIN) problems.push(`Password: at least ${PASSWORD_MIN} characters (this one has ${length}). A few unrelated words make a good one.`);
  if (length > PASSWORD_MAX) problems.push(`Password: at most ${PASSWORD_MAX} characters.`);
  const lower = password.toLowerCase();
  const core = lower.replace(/^[\d\W_]+|[\d\W_]+$/g, '');
  const unit = repeatedUnit(lower);
  if (!lower.trim()) problems.push('Password: not only spaces.');
  else if (COMMON.has(lower) || (core && COMMON.has(core)) || (unit && COMMON.has(unit))) {
    problems.push('Password: this is one of the most common passwords, the first an attacker tries; choose another.');
  } else if ((unit && unit.length <= 4) || isSequential(lower)) {
    problems.push('Password: not one short run of characters repeated or typed in sequence; choose something less predictable.');
  }
  const names = [account.username.toLowerCase(), account.email.toLowerCase().split('@')[0] ?? '', ...SERVICE_WORDS].filter((n) => n.length >= 3);
  if (names.some((n) => lower.includes(n))) problems.push('Password: it must not contain your username, your email address or the name of this service.');
  return problems;
}
