// Host-side helpers shared by the accuracy corpus: random non-zero inputs, error checks and a launch
// wrapper, so that every corpus file stays a standalone program that ncu and compute-sanitizer can run.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

// Values in [0.5, 1.5): never zero, so no branch or product degenerates.
static float rand_value(unsigned& state) {
    state = state * 1664525u + 1013904223u;
    return 0.5f + (state >> 8) * (1.0f / 16777216.0f);
}

// `count` floats on the device; also used for float2/float4/structs of floats through a cast.
static float* device_floats(size_t count, unsigned seed = 1) {
    std::vector<float> host(count);
    for (auto& v : host) v = rand_value(seed);
    float* dev = nullptr;
    CHECK(cudaMalloc(&dev, count * sizeof(float)));
    CHECK(cudaMemcpy(dev, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    return dev;
}

static double* device_doubles(size_t count, unsigned seed = 2) {
    std::vector<double> host(count);
    for (auto& v : host) v = rand_value(seed);
    double* dev = nullptr;
    CHECK(cudaMalloc(&dev, count * sizeof(double)));
    CHECK(cudaMemcpy(dev, host.data(), count * sizeof(double), cudaMemcpyHostToDevice));
    return dev;
}

// Random indices in [0, range), or the identity when `identity` is set.
static int* device_indices(size_t count, size_t range, bool identity = false, unsigned seed = 3) {
    std::vector<int> host(count);
    for (size_t i = 0; i < count; ++i) {
        seed = seed * 1664525u + 1013904223u;
        host[i] = identity ? int(i % range) : int((seed >> 4) % range);
    }
    int* dev = nullptr;
    CHECK(cudaMalloc(&dev, count * sizeof(int)));
    CHECK(cudaMemcpy(dev, host.data(), count * sizeof(int), cudaMemcpyHostToDevice));
    return dev;
}

template <typename T>
static T* device_zeros(size_t count) {
    T* dev = nullptr;
    CHECK(cudaMalloc(&dev, count * sizeof(T)));
    CHECK(cudaMemset(dev, 0, count * sizeof(T)));
    return dev;
}

// Checks the launch and the kernel's completion; each corpus kernel is launched exactly once.
static void finish(const char* kernel) {
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("%s ok\n", kernel);
}
