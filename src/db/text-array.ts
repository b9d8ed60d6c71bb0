/**
 * A `text[]` column written as PostgreSQL reads an array literal. MikroORM's own array type
 * leaves an element unquoted unless it holds `"`, `{`, `}`, `,` or `\`, and PostgreSQL reads an
 * unquoted `null` (any case) as NULL and trims unquoted white space: a tag "null" was stored as
 * NULL, and every read of it then failed its response schema (a 500). Here every element is
 * quoted, with `"` and `\` escaped, so what is written is the text that was given
 * (docs/decisions/0008-text-arrays.md).
 */
import { ArrayType, type Platform, type TransformContext } from '@mikro-orm/postgresql';

export class TextArrayType extends ArrayType<string> {
  override convertToDatabaseValue(
    value: string[] | null,
    platform: Platform,
    context?: TransformContext,
  ): string | null {
    if (!Array.isArray(value)) return super.convertToDatabaseValue(value, platform, context);
    return `{${value.map((item) => `"${item.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
  }
}
