/**
 * The id of a heading on the pages made from the repository's Markdown (/docs/guide,
 * /docs/changes): lowercase, runs of anything but letters and digits as one hyphen. The bundler
 * links each operation to its area's heading with it (codegen/bundle.ts).
 */
export const headingId = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
