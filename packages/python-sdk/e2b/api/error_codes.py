# placeholder until `nox -s codegen` generates this folder
SANDBOX_PAUSE_REFUSED_ERROR_CODE = "sandbox_pause_refused"
