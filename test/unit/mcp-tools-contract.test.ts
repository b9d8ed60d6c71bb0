/** Each MCP tool is bound to the REST operation it mirrors: its scope is that operation's, read from the contract. */
import { describe, expect, it } from 'vitest';
import { eachOperation, loadContract, MCP_SCOPES, type OpenApiDocument } from '../../src/kernel/contract.js';
import { bindTools, type ToolDef } from '../../src/mcp/kit/tool.js';
import { TOOLS } from '../../src/mcp/catalogue.js';
import { projectsTools } from '../../src/projects/projects.tools.js';
import { milestonesTools } from '../../src/milestones/milestones.tools.js';
import { postsTools } from '../../src/posts/posts.tools.js';

const contract = loadContract();
const tools: ToolDef[] = [...projectsTools, ...milestonesTools, ...postsTools];
const operation = (doc: OpenApiDocument, id: string) =>
  [...eachOperation(doc)].find((o) => o.op.operationId === id)!.op;

describe('the MCP tools and their operations', () => {
  it("give each tool its operation's scope, and together the MCP endpoint's scopes", () => {
    expect(TOOLS.map((t) => [t.name, t.operation, t.scope])).toEqual([
      ['list_my_projects', 'listProjects', 'projects.read'],
      ['get_roadmap', 'listMilestones', 'projects.read'],
      ['create_milestone', 'createMilestone', 'projects.write'],
      ['update_milestone', 'updateMilestone', 'projects.write'],
      ['delete_milestone', 'deleteMilestone', 'projects.write'],
      ['list_build_logs', 'listBuildLogs', 'projects.read'],
      ['create_build_log', 'createPost', 'content.write'],
    ]);
    for (const t of TOOLS) expect(t.scope).toBe(operation(contract, t.operation)['x-required-scope']);
    expect(new Set(TOOLS.map((t) => t.scope))).toEqual(new Set(MCP_SCOPES));
  });

  it("follows the contract when an operation's scope changes", () => {
    const bent = structuredClone(contract);
    operation(bent, 'listBuildLogs')['x-required-scope'] = 'content.read';
    operation(bent, 'mcpRequest')['x-mcp-scopes'] = [...MCP_SCOPES, 'content.read'];
    expect(bindTools(tools, bent).find((t) => t.name === 'list_build_logs')!.scope).toBe('content.read');
  });

  it('refuses to start when a tool and the contract disagree', () => {
    const elsewhere = tools.map((t) => (t.name === 'create_milestone' ? { ...t, operation: 'createJob' } : t));
    expect(() => bindTools(elsewhere, contract)).toThrow(/a tool needs jobs\.write, which x-mcp-scopes does not name/);
    const unknown = tools.map((t) => (t.name === 'get_roadmap' ? { ...t, operation: 'getRoadmap' } : t));
    expect(() => bindTools(unknown, contract)).toThrow(/get_roadmap: the contract has no operation getRoadmap/);
    const wider = structuredClone(contract);
    operation(wider, 'mcpRequest')['x-mcp-scopes'] = [...MCP_SCOPES, 'radar.read'];
    expect(() => bindTools(tools, wider)).toThrow(/x-mcp-scopes names radar\.read, which no tool needs/);
    const narrower = structuredClone(contract);
    operation(narrower, 'mcpRequest')['x-mcp-scopes'] = ['projects.read', 'projects.write'];
    expect(() => bindTools(tools, narrower)).toThrow(/a tool needs content\.write/);
  });

  it("carries each operation's object rules to its tool, and follows them when they change", () => {
    expect(TOOLS.filter((t) => t.bodyRules).map((t) => [t.name, t.bodyRules])).toEqual([
      [
        'update_milestone',
        {
          fields: ['title', 'description', 'status', 'startDate', 'dueDate', 'dueDateReason', 'position'],
          minProperties: 1,
        },
      ],
    ]);
    const bent = structuredClone(contract);
    const schemas = (bent.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
    delete schemas.MilestoneUpdate!.minProperties;
    schemas.MilestoneCreate!.dependentRequired = { dueDate: ['status'] };
    const bound = bindTools(tools, bent);
    expect(bound.find((t) => t.name === 'update_milestone')!.bodyRules).toBeUndefined();
    expect(bound.find((t) => t.name === 'create_milestone')!.bodyRules?.dependentRequired).toEqual({
      dueDate: ['status'],
    });
  });
});
