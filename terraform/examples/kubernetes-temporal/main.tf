# taskgate next to a Temporal cluster that runs on Kubernetes (the Temporal Helm chart), in a
# namespace of its own, talking to the frontend Service over the cluster network.
module "taskgate" {
  source = "../../modules/taskgate-kubernetes"

  namespace          = var.namespace
  image              = var.image
  mapping_yaml       = file(coalesce(var.mapping_file, "${path.module}/tools.yaml"))
  temporal_address   = var.temporal_address
  temporal_namespace = var.temporal_namespace
  token_keys         = var.token_keys
  api_keys           = { TASKGATE_KEY_CLIENTS = var.client_api_key }
}
