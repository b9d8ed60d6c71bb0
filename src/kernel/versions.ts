/** The MCP protocol versions this server speaks, newest first (product rule 8: exactly these). */
export const MCP_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
