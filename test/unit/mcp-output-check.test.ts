/**
 * Each MCP tool's result is checked against its output schema before it is sent
 * (VALIDATE_RESPONSES), by the validator REST's answers are checked with (decision 0019):
 * compiled once per tool from the zod schema, with the contract's formats kept.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { zProjectLink } from '../../codegen/generated/api/zod.gen.js';
import { outputMismatch, TOOLS } from '../../src/mcp/catalogue.js';
import type { BoundTool } from '../../src/mcp/kit/tool.js';

const linksTool = { output: z.object({ links: z.array(zProjectLink) }) } as unknown as BoundTool;
const links = (url: string) => ({ links: [{ label: 'Site', url }] });

describe("the check of a tool's result", () => {
  it('passes a link the contract allows, and an object with more fields than the schema names', () => {
    expect(outputMismatch(linksTool, links('https://example.com/a?b=c'))).toBeUndefined();
    expect(
      outputMismatch(linksTool, { links: [{ label: 'Site', url: 'https://example.com', extra: 1 }] }),
    ).toBeUndefined();
  });

  it("refuses a link that is not a URL, though it starts as the contract's pattern asks", () => {
    expect(outputMismatch(linksTool, links('https://exa mple.com'))).toMatch(
      /^\/links\/0\/url must match format "uri"/,
    );
  });

  it("refuses a link the contract's pattern does not allow, and a missing field", () => {
    expect(outputMismatch(linksTool, links('ftp://example.com'))).toMatch(/^\/links\/0\/url must match pattern/);
    expect(outputMismatch(linksTool, { links: [{ label: 'Site' }] })).toMatch(/must have required property 'url'/);
  });

  it("compiles every tool's output schema, and refuses an empty result for each", () => {
    for (const tool of TOOLS) expect(outputMismatch(tool, {}), tool.name).toMatch(/must have required property/);
  });
});
