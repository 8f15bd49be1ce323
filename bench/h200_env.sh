# bench/h200_env.sh - sourced by the bench/h200_*.sh scripts on the device
# machine (repo root, build carried): unpacks the .debs in .gl/ (Vulkan and
# GL loaders, cJSON, PCRE2, utf8proc; scripts/fetch-gl-loaders.sh fetches
# them) when a library the build needs is missing, and points the Vulkan
# loader at NVIDIA's driver and the dynamic linker at Dawn.
for lib in libvulkan.so.1 libcjson.so.1 libpcre2-8.so.0 libutf8proc.so.2; do
  if ! ldconfig -p | grep -q "$lib"; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    break
  fi
done
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export LD_LIBRARY_PATH=$PWD/deps/dawn/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
