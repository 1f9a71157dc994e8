output "service_name" {
  description = "Name of the Service in front of taskgate."
  value       = kubernetes_service_v1.this.metadata[0].name
}

output "namespace" {
  description = "Namespace taskgate runs in."
  value       = local.namespace
}

output "mcp_url" {
  description = "The MCP endpoint inside the cluster: http://NAME.NAMESPACE.svc.cluster.local[:PORT]/mcp. Expose it to clients through an Ingress or Gateway with TLS, or kubectl port-forward."
  value       = "http://${kubernetes_service_v1.this.metadata[0].name}.${local.namespace}.svc.cluster.local${var.service_port == 80 ? "" : ":${var.service_port}"}/mcp"
}

output "port_forward_command" {
  description = "A command that makes taskgate reachable at http://127.0.0.1:8080/mcp from this machine."
  value       = "kubectl --namespace ${local.namespace} port-forward service/${kubernetes_service_v1.this.metadata[0].name} 8080:${var.service_port}"
}

output "service_account_name" {
  description = "ServiceAccount of the pods (annotate it for IRSA or bind it to EKS Pod Identity for Step Functions engines)."
  value       = kubernetes_service_account_v1.this.metadata[0].name
}

output "deployment_name" {
  description = "Name of the Deployment."
  value       = kubernetes_deployment_v1.this.metadata[0].name
}
