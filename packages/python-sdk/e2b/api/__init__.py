# placeholder until `nox -s codegen` generates this folder
