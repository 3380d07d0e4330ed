/// The GatewayServer target.
