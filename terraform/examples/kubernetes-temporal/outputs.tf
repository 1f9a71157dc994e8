output "mcp_url" {
  description = "The MCP endpoint inside the cluster."
  value       = module.taskgate.mcp_url
}

output "port_forward_command" {
  description = "Run this, then point a client at http://127.0.0.1:8080/mcp."
  value       = module.taskgate.port_forward_command
}
