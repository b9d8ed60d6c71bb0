/** Tags are lowercase, trimmed and unique, in the order given. */
export function normaliseTags(tags: string[] | undefined): string[] {
  if (!tags) return [];
  return [...new Set(tags.map((t) => t.trim().toLowerCase()).filter(Boolean))];
}
