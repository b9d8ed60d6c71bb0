export function routeMatches(rule: string, method: string, fullPath: string): boolean;
export function expectedScopes(scopes: { id: string; opens?: string[] }[], method: string, fullPath: string): string[];
declare const scopeTable: (doc: unknown) => { message: string; path: (string | number)[] }[];
export default scopeTable;
